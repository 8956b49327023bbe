"""Numbers about tensors and runs, in rooms, each importing only the rooms below it (.importlinter's
analysis-rooms contract); built on core.run and core.format.

    graph/          a model's graph made drawable: groups, the open ones' layout, DOT and SVG
    diagnosis/      what went wrong in training, from the checkpoints alone: the data, the rules, the findings
    overview/       every variable at every checkpoint (the overview), a variable's rows, its distribution
    spectral/       the weight matrices' spectra (WeightWatcher's alpha, stable rank, ...), per checkpoint
    trajectories/   one metric across a run's checkpoints: pieces, the side-by-side pass, grouped small tensors
    comparison/     two checkpoints compared, likely renames, will one restore into a program
    numerics/       one tensor's statistics and sums, value differences, work arrays, BLAS threads
    display/        one tensor made fit for a screen: a heatmap's reduction, a 2-D slice
"""
