import json, os
from google.cloud import bigquery

client = bigquery.Client.from_service_account_json(os.path.expanduser("~/keyfile.json"))
project = client.project
client.query(f"""CREATE TABLE `{project}.garage.origin_summary` AS
SELECT Origin AS origin, COUNT(*) AS cars, ROUND(AVG(Miles_per_Gallon), 2) AS avg_mpg
FROM `{project}.garage.cars` GROUP BY Origin""").result()
