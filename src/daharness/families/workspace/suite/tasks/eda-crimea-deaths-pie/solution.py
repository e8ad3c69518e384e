import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

deaths = pd.DataFrame(json.load(open("crimea.json")))
fields = ["disease", "wounds", "other"]
totals = [int(deaths[field].sum()) for field in fields]

fig, ax = plt.subplots(figsize=(8, 8))
ax.pie(
    totals,
    labels=["Disease", "Wounds", "Other causes"],
    colors=["#4C72B0", "#C44E52", "#8C8C8C"],
    autopct="%1.1f%%",
    startangle=90,
)
ax.set_title("Crimean War Deaths by Cause, April 1854 - March 1856")
fig.savefig("deaths_by_cause.png")
