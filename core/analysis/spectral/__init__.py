"""The spectra of weight matrices (WeightWatcher's rules, natively): the fit of a power law, one
checkpoint's table of alpha, stable rank, spectral norm and log norm."""
