import json, os
from google.cloud import bigquery

client = bigquery.Client.from_service_account_json(os.path.expanduser("~/keyfile.json"))
project = client.project
client.query(f"""CREATE VIEW `{project}.botany.species_means` AS
SELECT species, ROUND(AVG(petal_length_cm), 3) AS mean_petal_length
FROM `{project}.botany.iris` GROUP BY species""").result()
