cd ~/projects/market
printf 'models:\n  market:\n    +materialized: table\n' >> dbt_project.yml
sed -i "s/{{ config(materialized='view') }}//" models/monthly_prices.sql
dbt build
