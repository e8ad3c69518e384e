"""Reference solution for closed-form question 126."""

import pandas as pd
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

df = pd.read_csv("seattle_weather.csv")
df["temp_range"] = df["temp_max"] - df["temp_min"]
df["month"] = pd.to_datetime(df["date"], format="%Y-%m-%d").dt.month
features = ["precipitation", "temp_max", "temp_min", "wind", "temp_range", "month"]
X_train, X_test, y_train, y_test = train_test_split(
    df[features], df["weather"], test_size=0.2, random_state=42, stratify=df["weather"]
)
model = DecisionTreeClassifier(max_depth=4, random_state=42).fit(X_train, y_train)
importances = pd.Series(model.feature_importances_, index=features)
print(f"@accuracy[{accuracy_score(y_test, model.predict(X_test)):.4f}]")
print(f"@most_important_feature[{importances.idxmax()}]")
print(f"@top_importance[{importances.max():.4f}]")
