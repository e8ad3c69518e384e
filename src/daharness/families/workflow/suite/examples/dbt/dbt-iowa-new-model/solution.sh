cd ~/projects/energy
cat > models/renewable_share.sql <<'SQL'
{{ config(materialized='table') }}

select
    year,
    sum(net_generation) as total,
    round(100.0 * sum(case when source = 'Renewables' then net_generation else 0 end) / sum(net_generation), 1) as renewable_pct
from {{ ref('iowa_generation') }}
group by year
order by year
SQL
dbt build
