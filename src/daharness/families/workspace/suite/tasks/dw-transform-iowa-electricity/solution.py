"""Reference solution: reshape Iowa's net generation to one row per year with totals and shares."""

import pandas as pd

long = pd.read_csv("iowa_net_generation.csv")
long["year"] = long["year"].str[:4].astype(int)
wide = long.pivot(index="year", columns="source", values="net_generation").reset_index()
wide = wide.rename(
    columns={"Fossil Fuels": "fossil_fuels", "Nuclear Energy": "nuclear_energy", "Renewables": "renewables"}
)
wide["total"] = wide["fossil_fuels"] + wide["nuclear_energy"] + wide["renewables"]
wide["renewables_share_pct"] = (100 * wide["renewables"] / wide["total"]).round(2)
columns = ["year", "fossil_fuels", "nuclear_energy", "renewables", "total", "renewables_share_pct"]
wide.sort_values("year")[columns].to_csv("iowa_generation_by_year.csv", index=False)
