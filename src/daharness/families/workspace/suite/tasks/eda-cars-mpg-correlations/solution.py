import pandas as pd
from scipy import stats

cars = pd.read_json("cars.json")
predictors = ["Cylinders", "Displacement", "Horsepower", "Weight_in_lbs", "Acceleration"]
complete = cars.dropna(subset=["Miles_per_Gallon"] + predictors)

rows = []
for name in predictors:
    pearson = stats.pearsonr(complete[name], complete["Miles_per_Gallon"]).statistic
    spearman = stats.spearmanr(complete[name], complete["Miles_per_Gallon"]).statistic
    rows.append(
        {
            "variable": name,
            "pearson_r": round(pearson, 4),
            "spearman_rho": round(spearman, 4),
            "n": len(complete),
        }
    )

table = pd.DataFrame(rows)
table = table.reindex(table["pearson_r"].abs().sort_values(ascending=False).index)
table.to_csv("mpg_correlations.csv", index=False)
