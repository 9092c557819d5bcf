"""The localization simulator: odometry drift, Gauss-Markov map-pose noise, EKF, scenarios."""
