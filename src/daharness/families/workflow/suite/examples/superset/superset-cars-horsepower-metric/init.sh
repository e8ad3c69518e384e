#!/bin/bash
# Superset started as the official tasks start it, the table cars loaded into its PostgreSQL, and that
# database registered in Superset as "Vehicles" (as the official tasks register PublicData)
cd /home/user/projects/superset
docker compose -f docker-compose-image-tag.yml up --detach
for i in $(seq 60); do docker compose logs | grep -q "Init Step 4/4" && break; sleep 2; done
psql -q -v ON_ERROR_STOP=1 "postgresql://superset:superset@localhost:5432/superset" <<'SQL'
CREATE TABLE cars (name text, miles_per_gallon double precision, cylinders integer,
    displacement double precision, horsepower double precision, weight_in_lbs integer,
    acceleration double precision, year date, origin text);
\copy cars FROM '/home/user/cars.csv' WITH (FORMAT csv, HEADER true)
SQL
rm -f /home/user/cars.csv
token=$(curl -s -X POST http://localhost:8088/api/v1/security/login -H "Content-Type: application/json" \
    -d '{"username": "admin", "password": "admin", "provider": "db"}' | jq -rM .access_token)
curl -s -X POST http://localhost:8088/api/v1/database/ -H "Content-Type: application/json" \
    -H "Authorization: Bearer ${token}" \
    -d '{"database_name": "Vehicles", "sqlalchemy_uri": "postgresql://superset:superset@db:5432/superset"}'
