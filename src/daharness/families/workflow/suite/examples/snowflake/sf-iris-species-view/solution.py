import json, os, re
import snowflake.connector

settings = json.load(open(os.path.expanduser("~/snowflake_settings.json")))
settings["account"] = re.sub(r"^https://|\.snowflakecomputing\.com.*$", "", settings["account"])
connection = snowflake.connector.connect(**settings)
cursor = connection.cursor()
cursor.execute("""CREATE VIEW BOTANY.PUBLIC.SPECIES_MEANS AS
SELECT SPECIES, ROUND(AVG(PETAL_LENGTH_CM), 3) AS MEAN_PETAL_LENGTH FROM BOTANY.PUBLIC.IRIS GROUP BY SPECIES""")
