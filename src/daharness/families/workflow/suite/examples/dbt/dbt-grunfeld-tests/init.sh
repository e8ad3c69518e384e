#!/bin/bash
# set up the dbt project investment in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/investment.zip && rm -f ~/investment.zip
mv investment/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/investment
code /home/user/projects/investment --disable-workspace-trust
