mv ~/weather_labels.csv ~/projects/weather/seeds/
cd ~/projects/weather
dbt build
