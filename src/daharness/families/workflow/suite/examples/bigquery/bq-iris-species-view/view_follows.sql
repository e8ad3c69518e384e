INSERT INTO `{0}.botany.iris` (species, petal_length_cm) VALUES ('daharness-check', 1.5);
SELECT species, mean_petal_length FROM `{0}.botany.species_means` WHERE species = 'daharness-check'
