"""One tensor made fit for a screen: a heatmap's reduction to the pixels shown, a 2-D slice of a higher rank."""
