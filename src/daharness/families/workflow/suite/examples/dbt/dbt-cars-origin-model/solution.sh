cd ~/projects/garage
cat > models/origin_summary.sql <<'SQL'
{{ config(materialized='table') }}

select
    origin,
    count(*) as cars,
    round(avg(mpg), 2) as avg_mpg,
    max(horsepower) as max_horsepower
from {{ ref('cars') }}
group by origin
order by origin
SQL
dbt build
