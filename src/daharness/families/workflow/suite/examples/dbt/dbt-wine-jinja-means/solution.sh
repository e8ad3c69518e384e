cd ~/projects/cellar
cat > models/cultivar_means.sql <<'SQL'
{{ config(materialized='table') }}
{% set measures = ['alcohol', 'malic_acid', 'color_intensity', 'proline'] %}

select
    cultivar,
    {% for column in measures %}round(avg({{ column }}), 2) as avg_{{ column }}{% if not loop.last %},{% endif %}
    {% endfor %}
from {{ ref('wine') }}
group by cultivar
order by cultivar
SQL
dbt build
