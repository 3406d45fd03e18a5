# leaks.gp: how often `memtrace leaks` is right, one group of bars a program,
# one bar a mode (series: killed by SIGKILL after snapshots; end: run to its end,
# end state only; term: stopped by SIGTERM, end state only), with the floors of
# issue 30 drawn across (95 % for series, 90 % for a leak's line at the end,
# 98 % = flagged at most 2 % for a program that does not leak, at the end).
# Input: results/leaks_figure.dat from bench/leaks_eval.sh: a header line, then
# one row a program: name ("*" after a leaking one), then the percent of its runs passed in each mode
# (NaN: the mode did not run it).
# Run: gnuplot -e "datafile='bench/results/leaks_figure.dat'; outfile='bench/results/leaks.png'; \
#        modes='series end'" bench/leaks.gp
if (!exists("datafile")) datafile = 'bench/results/leaks_figure.dat'
if (!exists("outfile")) outfile = 'bench/results/leaks.png'
if (!exists("modes")) modes = 'series end'

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1400,560 font ",10" noenhanced
} else {
  set terminal png size 1400,560 noenhanced
}
set output outfile
set datafile missing "NaN"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:105]
set ylabel "runs right (%)"
set xtics rotate by -40 font ",9"
set grid ytics
set key outside top center horizontal
set title "memtrace leaks against the ground truth: share of runs right per program (rates and seeds pooled; * leaks)"
set rmargin 10
set bmargin 7
plot for [i=1:words(modes)] datafile using (column(i+1)):xtic(1) title word(modes, i), \
     95 with lines dashtype 2 lc rgb "black" title "floor 95 % (series)", \
     90 with lines dashtype 3 lc rgb "red" title "floor 90 % (end, leaking)"
