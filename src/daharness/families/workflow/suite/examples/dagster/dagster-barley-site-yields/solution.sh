cd ~/projects/barley
cat >> barley/assets.py <<'PY'


@asset
def yield_by_site(barley_trials: pd.DataFrame) -> None:
    table = barley_trials.groupby("site", as_index=False)["yield"].mean().rename(columns={"yield": "mean_yield"})
    table["mean_yield"] = table["mean_yield"].round(2)
    table.sort_values("mean_yield", ascending=False).to_csv(DATA / "yield_by_site.csv", index=False)
PY
source ~/anaconda3/etc/profile.d/conda.sh
conda activate dagster
export DAGSTER_HOME=/home/user/.dagster
dagster asset materialize -m barley --select barley_trials,yield_by_site
