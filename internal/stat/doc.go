// Package stat holds the small statistics every layer uses: Wilson
// intervals, Fisher's exact test, the exact upper bound of a rate with no
// failure, the binomial order-statistic interval of a quantile
// (QuantileCI95), log-binomials and rounding. It is a leaf: it imports only
// the standard library.
package stat
