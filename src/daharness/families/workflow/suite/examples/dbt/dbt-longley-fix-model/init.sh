#!/bin/bash
# set up the dbt project economy in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/economy.zip && rm -f ~/economy.zip
mv economy/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/economy
code /home/user/projects/economy --disable-workspace-trust
