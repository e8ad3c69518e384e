import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

generation = pd.read_csv("iowa-electricity.csv")
generation["year"] = pd.to_datetime(generation["year"]).dt.year
table = generation.pivot(index="year", columns="source", values="net_generation")
share = table.div(table.sum(axis=1), axis=0) * 100

colors = {"Fossil Fuels": "#7F7F7F", "Nuclear Energy": "#9467BD", "Renewables": "#2CA02C"}
fig, ax = plt.subplots(figsize=(10, 6))
for source, color in colors.items():
    ax.plot(share.index, share[source], color=color, label=source)
ax.set_title("Share of Iowa Net Electricity Generation by Source, 2001-2017")
ax.set_xlabel("Year")
ax.set_ylabel("Share of net generation (%)")
ax.legend(title="Source")
fig.tight_layout()
fig.savefig("generation_share.png")
