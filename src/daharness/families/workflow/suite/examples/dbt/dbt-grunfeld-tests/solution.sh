cd ~/projects/investment
cat > models/schema.yml <<'YAML'
version: 2

models:
  - name: firm_totals
    columns:
      - name: firm
        tests:
          - unique
          - not_null
      - name: total_invest
        tests:
          - not_null
      - name: years
YAML
dbt build
