#!/bin/bash
# set up the dbt project weather in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/weather.zip && rm -f ~/weather.zip
mv weather/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/weather
code /home/user/projects/weather --disable-workspace-trust
