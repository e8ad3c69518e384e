cd ~/projects/economy
python - <<'PY'
from pathlib import Path
path = Path("models/employment_ratio.sql")
path.write_text(path.read_text().replace("unemployed", "unemp"))
PY
dbt build
