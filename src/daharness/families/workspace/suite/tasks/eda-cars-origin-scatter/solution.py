import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

cars = pd.read_csv("cars.csv")
cars = cars.dropna(subset=["Miles_per_Gallon"])
cars["model_year"] = pd.to_datetime(cars["Year"]).dt.year

groups = (
    cars.groupby(["Origin", "model_year"])
    .agg(n=("Name", "size"), weight=("Weight_in_lbs", "mean"), mpg=("Miles_per_Gallon", "mean"))
    .reset_index()
)
groups = groups[groups["n"] >= 3]

colors = {"USA": "#1F77B4", "Europe": "#FF7F0E", "Japan": "#D62728"}
fig, ax = plt.subplots(figsize=(10, 6))
for origin, color in colors.items():
    points = groups[groups["Origin"] == origin].sort_values("model_year")
    ax.scatter(points["weight"], points["mpg"], color=color, label=origin)
ax.set_title("Average Fuel Economy vs. Average Weight by Origin and Model Year")
ax.set_xlabel("Average weight (lbs)")
ax.set_ylabel("Average fuel economy (mpg)")
ax.legend(title="Origin")
fig.tight_layout()
fig.savefig("mpg_vs_weight.png")
