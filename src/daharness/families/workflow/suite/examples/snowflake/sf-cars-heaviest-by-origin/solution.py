import json, os, re
import snowflake.connector

settings = json.load(open(os.path.expanduser("~/snowflake_settings.json")))
settings["account"] = re.sub(r"^https://|\.snowflakecomputing\.com.*$", "", settings["account"])
connection = snowflake.connector.connect(**settings)
cursor = connection.cursor()
cursor.execute("""CREATE TABLE GARAGE.PUBLIC.HEAVIEST AS
SELECT ORIGIN, NAME, WEIGHT_IN_LBS FROM (
  SELECT ORIGIN, NAME, WEIGHT_IN_LBS, ROW_NUMBER() OVER (PARTITION BY ORIGIN ORDER BY WEIGHT_IN_LBS DESC, NAME) AS R
  FROM GARAGE.PUBLIC.CARS) WHERE R = 1""")
