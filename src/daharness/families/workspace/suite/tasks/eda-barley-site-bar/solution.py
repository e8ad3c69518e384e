import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

barley = pd.read_json("barley.json")
by_site = barley.groupby("site")["yield"].mean().sort_values(ascending=False)

fig, ax = plt.subplots(figsize=(10, 6))
ax.bar(by_site.index, by_site.values, color="#5B8DB8")
ax.set_title("Average Barley Yield by Site, 1931-1932")
ax.set_xlabel("Site")
ax.set_ylabel("Average yield (bushels per acre)")
fig.tight_layout()
fig.savefig("site_yield.png")
