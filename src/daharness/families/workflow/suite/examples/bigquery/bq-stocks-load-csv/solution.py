import json, os
from google.cloud import bigquery

client = bigquery.Client.from_service_account_json(os.path.expanduser("~/keyfile.json"))
project = client.project
import io
import pandas as pd
frame = pd.read_csv(os.path.expanduser("~/stocks.csv"))
frame["date"] = pd.to_datetime(frame["date"], format="%b %d %Y").dt.date
client.create_dataset("market", exists_ok=True)
schema = [bigquery.SchemaField("symbol", "STRING"), bigquery.SchemaField("date", "DATE"), bigquery.SchemaField("price", "FLOAT64")]
config = bigquery.LoadJobConfig(source_format="CSV", skip_leading_rows=1, schema=schema)
client.load_table_from_file(io.BytesIO(frame.to_csv(index=False).encode()), f"{project}.market.prices", job_config=config).result()
