SELECT symbol, COUNT(*) AS n, ROUND(AVG(price), 2) AS avg, CAST(MIN(date) AS STRING) AS first_day
FROM `{0}.market.prices` GROUP BY symbol ORDER BY symbol
