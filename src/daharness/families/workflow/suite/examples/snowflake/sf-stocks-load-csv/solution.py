import json, os, re
import snowflake.connector

settings = json.load(open(os.path.expanduser("~/snowflake_settings.json")))
settings["account"] = re.sub(r"^https://|\.snowflakecomputing\.com.*$", "", settings["account"])
connection = snowflake.connector.connect(**settings)
cursor = connection.cursor()
import pandas as pd
frame = pd.read_csv(os.path.expanduser("~/stocks.csv"))
frame["date"] = pd.to_datetime(frame["date"], format="%b %d %Y").dt.strftime("%Y-%m-%d")
cursor.execute("CREATE DATABASE MARKET")
cursor.execute("CREATE TABLE MARKET.PUBLIC.PRICES (SYMBOL VARCHAR, DATE DATE, PRICE FLOAT)")
cursor.executemany("INSERT INTO MARKET.PUBLIC.PRICES VALUES (%s, %s, %s)", list(frame.itertuples(index=False, name=None)))
