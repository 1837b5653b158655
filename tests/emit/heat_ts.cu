/*
 * heat_ts.cu: generated from heat_ts.stn by stencilc 0.1.0. heat_ts.stn is time-dependent (its
 * residuals take dt(...)): such programs run on CPUs for now, so there are no GPU kernels.
 */
