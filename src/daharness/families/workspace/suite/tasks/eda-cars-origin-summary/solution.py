import pandas as pd

cars = pd.read_csv("cars.csv")
cars["model_year"] = pd.to_datetime(cars["Year"]).dt.year
recent = cars[cars["model_year"] >= 1975]

summary = (
    recent.groupby("Origin")
    .agg(
        n_models=("Name", "size"),
        avg_mpg=("Miles_per_Gallon", "mean"),
        avg_horsepower=("Horsepower", "mean"),
        avg_weight_lbs=("Weight_in_lbs", "mean"),
    )
    .reset_index()
)
for column in ["avg_mpg", "avg_horsepower", "avg_weight_lbs"]:
    summary[column] = summary[column].round(2)
summary = summary.sort_values("avg_mpg", ascending=False)
summary.to_csv("origin_summary.csv", index=False)
