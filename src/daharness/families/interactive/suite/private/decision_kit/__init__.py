"""decision_kit: the analysts' own helper library of the built-in interactive suite's private dialogues.

Written for daharness (as Tapilot-Crossing's `decision_company`): thin wrappers of pandas, matplotlib and
scikit-learn under names a model has not seen in training, so that using them needs reading their docs.
"""

import matplotlib.pyplot as plt
import pandas as pd
from sklearn.linear_model import LinearRegression


def load_table(path):
    """Read a CSV file into a DataFrame.

    :param path: path of the CSV file
    :return: pandas DataFrame
    """
    return pd.read_csv(path)


def keep_rows(table, column, operator, value):
    """Keep the rows whose `column` compares with `value` by `operator`.

    :param table: pandas DataFrame
    :param column: column name
    :param operator: one of '==', '!=', '>', '>=', '<', '<=', 'in' (value is then a list)
    :param value: the value compared with
    :return: the kept rows, a new DataFrame with the original index
    """
    series = table[column]
    tests = {
        "==": series == value,
        "!=": series != value,
        ">": series > value,
        ">=": series >= value,
        "<": series < value,
        "<=": series <= value,
    }
    mask = series.isin(value) if operator == "in" else tests[operator]
    return table[mask].copy()


def pick_columns(table, columns):
    """Keep only the given columns, in the given order.

    :param table: pandas DataFrame
    :param columns: list of column names
    :return: a new DataFrame
    """
    return table[list(columns)].copy()


def count_missing(table):
    """Count the missing values of each column.

    :param table: pandas DataFrame
    :return: Series indexed by column name
    """
    return table.isna().sum()


def group_summary(table, by, column, how="mean"):
    """Summarise one column per group.

    :param table: pandas DataFrame
    :param by: column (or list of columns) to group by
    :param column: the column to summarise
    :param how: 'mean', 'median', 'sum', 'count', 'min', 'max' or 'std'
    :return: Series indexed by the group values, sorted by them
    """
    return table.groupby(by)[column].agg(how)


def rank_top(data, n, by=None, largest=True):
    """The n largest (or smallest) entries.

    :param data: a Series, or a DataFrame (then `by` names the column to rank by)
    :param n: how many to keep
    :param by: the column to rank a DataFrame by
    :param largest: True for the largest values, False for the smallest
    :return: the first n entries after sorting, same type as `data`
    """
    if by is None:
        return data.sort_values(ascending=not largest).head(n)
    return data.sort_values(by, ascending=not largest).head(n)


def add_ratio(table, numerator, denominator, name):
    """Add a column holding numerator / denominator.

    :param table: pandas DataFrame
    :param numerator: column name
    :param denominator: column name
    :param name: name of the new column
    :return: a new DataFrame with the extra column
    """
    result = table.copy()
    result[name] = result[numerator] / result[denominator]
    return result


def bucketize(values, edges, labels=None):
    """Put numbers into intervals (left-open, right-closed), like pandas.cut.

    :param values: a Series of numbers
    :param edges: the interval edges, increasing
    :param labels: optional names of the intervals
    :return: a categorical Series
    """
    return pd.cut(values, bins=edges, labels=labels)


def frequency_table(values, share=False):
    """How often each value occurs, most frequent first.

    :param values: a Series
    :param share: True for shares of the total instead of counts
    :return: Series indexed by the values
    """
    return values.value_counts(normalize=share)


def cross_summary(table, rows, columns, values, how="mean"):
    """A pivot table: `values` summarised for each combination of `rows` and `columns`.

    :param table: pandas DataFrame
    :param rows: column whose values become the rows
    :param columns: column whose values become the columns
    :param values: the column summarised
    :param how: 'mean', 'sum', 'count', ...
    :return: DataFrame
    """
    return pd.pivot_table(table, index=rows, columns=columns, values=values, aggfunc=how)


def correlations_with(table, target, columns):
    """Pearson correlation of each of `columns` with `target`.

    :param table: pandas DataFrame
    :param target: the column correlated with
    :param columns: list of column names
    :return: Series indexed by column name, in the given order
    """
    return pd.Series({column: table[column].corr(table[target]) for column in columns})


def describe_numbers(values):
    """Count, mean, median, standard deviation, minimum and maximum of a numeric Series.

    :param values: a Series of numbers
    :return: dict with the keys 'count', 'mean', 'median', 'std', 'min', 'max'
    """
    return {
        "count": int(values.count()),
        "mean": float(values.mean()),
        "median": float(values.median()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
    }


def to_dates(values):
    """Parse text into dates.

    :param values: a Series of date strings
    :return: a Series of datetimes
    """
    return pd.to_datetime(values)


def fit_line(x, y):
    """Fit y = slope * x + intercept by least squares.

    :param x: a Series (or list) of numbers
    :param y: a Series (or list) of numbers
    :return: a fitted scikit-learn LinearRegression (coef_[0] is the slope)
    """
    model = LinearRegression()
    model.fit(pd.DataFrame({"x": list(x)}), list(y))
    return model


def line_slope(model):
    """The slope of a line fitted by fit_line.

    :param model: the result of fit_line
    :return: float
    """
    return float(model.coef_[0])


def new_canvas(width=8, height=5):
    """A new figure with one plot area.

    :param width: width in inches
    :param height: height in inches
    :return: (figure, axes)
    """
    return plt.subplots(figsize=(width, height))


def draw_histogram(axes, values, bins=10):
    """Draw a histogram of numbers on a plot area.

    :param axes: the plot area (from new_canvas)
    :param values: a Series of numbers (missing values are dropped)
    :param bins: number of bins
    """
    axes.hist(values.dropna(), bins=bins)


def draw_bars(axes, values):
    """Draw one bar per entry of a Series (its index as the labels).

    :param axes: the plot area (from new_canvas)
    :param values: a Series
    """
    axes.bar([str(label) for label in values.index], values.to_numpy())


def draw_line(axes, x, y, label=None):
    """Draw a line through the points (x, y).

    :param axes: the plot area (from new_canvas)
    :param x: x values
    :param y: y values
    :param label: legend label
    """
    axes.plot(x, y, label=label)


def name_axes(axes, title, xlabel, ylabel):
    """Set the title and axis labels of a plot area.

    :param axes: the plot area
    :param title: the title
    :param xlabel: label of the x axis
    :param ylabel: label of the y axis
    """
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)


def save_canvas(figure, path):
    """Save a figure as an image file and close it.

    :param figure: the figure (from new_canvas)
    :param path: the image file, e.g. 'chart.png'
    """
    figure.savefig(path)
    plt.close(figure)
