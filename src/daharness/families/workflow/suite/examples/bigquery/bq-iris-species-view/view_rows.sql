SELECT species, mean_petal_length FROM `{0}.botany.species_means` ORDER BY species
