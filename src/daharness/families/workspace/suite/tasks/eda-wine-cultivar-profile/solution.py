import json

import pandas as pd

wine = pd.read_csv("wine.csv")
means = wine.groupby("cultivar").mean()
measurements = [c for c in wine.columns if c != "cultivar"]

spread = means[measurements].max() / means[measurements].min()
answer = {
    "highest_alcohol_cultivar": int(means["alcohol"].idxmax()),
    "highest_mean_alcohol": round(float(means["alcohol"].max()), 2),
    "lowest_color_intensity_cultivar": int(means["color_intensity"].idxmin()),
    "most_separating_measurement": str(spread.idxmax()),
}
print(json.dumps(answer))
