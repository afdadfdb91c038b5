"""How good the judge is: agreement with human labels, calibration runs and fitting a calibration map,
paired comparisons of two reports."""
