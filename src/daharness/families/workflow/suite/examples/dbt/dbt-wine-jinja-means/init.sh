#!/bin/bash
# set up the dbt project cellar in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/cellar.zip && rm -f ~/cellar.zip
mv cellar/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/cellar
code /home/user/projects/cellar --disable-workspace-trust
