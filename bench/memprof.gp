# memprof.gp: the profiler's cost on each bench program against the sampling rate.
# Left: median CPU time at the rate over the profiler-off run (1 = free), with the
# floors (1e-5: 1.01, 1e-4: 1.03); ratios above ymax (1.5) are drawn at ymax with their
# value beside them. Right: cost per sample in ns (log scale).
# Input: results/memprof.dat from bench/memprof_bench.sh: one block per case (blocks
# separated by two blank lines), columns: rate cpu_ratio wall_ratio ns_per_sample,
# "?" for a missing value.
# Run: gnuplot -e "datafile='bench/results/memprof.dat'; outfile='bench/results/memprof.png'; \
#        titles='binary_trees-16 deep_map-10000-300'; ncases=2" bench/memprof.gp
if (!exists("datafile")) datafile = 'bench/results/memprof.dat'
if (!exists("outfile")) outfile = 'bench/results/memprof.png'
if (!exists("titles")) titles = ''
if (!exists("ncases")) ncases = words(titles)

# pngcairo if this gnuplot has it (gnuplot-nox does), else the libgd png terminal.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1200,520 font ",10" noenhanced
} else {
  set terminal png size 1200,520 noenhanced
}
set output outfile
set datafile missing "?"
set logscale x
set format x "%.0e"
set xrange [5e-7:2e-2]
set grid
set key top left font ",9"
set multiplot layout 1,2 title "memprof: cost of profiling the bench programs (counting C tracker; medians of the runs)"

set title "CPU time at rate λ / CPU time with the profiler off"
set xlabel "sampling rate λ (per word)"
set ylabel "ratio to off"
# Ratios above ymax are drawn at ymax with their value written beside them.
if (!exists("ymax")) ymax = 1.5
clamp(y) = (y > ymax) ? ymax : y
offscale(y) = (y > ymax) ? sprintf("%.2f", y) : ""
set yrange [0.9:ymax + 0.02]
set object 1 circle at first 1e-5, first 1.01 size screen 0.004 fillstyle solid fillcolor rgb "red" front
set object 2 circle at first 1e-4, first 1.03 size screen 0.004 fillstyle solid fillcolor rgb "red" front
set label 1 "floor 1e-5" at first 1e-5, first 1.01 offset 0.8,0.7 textcolor rgb "red" font ",8"
set label 2 "floor 1e-4" at first 1e-4, first 1.03 offset 0.8,0.7 textcolor rgb "red" font ",8"
plot for [i=0:ncases-1] datafile index i using 1:(clamp($2)) with linespoints linewidth 2 pointtype 7 pointsize 0.8 \
       linecolor i + 1 title word(titles, i + 1), \
     for [i=0:ncases-1] datafile index i using 1:(clamp($2)):(offscale($2)) with labels right offset -0.8,-0.6 \
       textcolor lt i + 1 font ",9" notitle, \
     1 with lines dashtype 2 linecolor rgb "gray40" notitle

unset object 1
unset object 2
unset label 1
unset label 2
set title "cost per sample: (CPU time at λ − off) / samples (points below the noise left out)"
set ylabel "ns per sample"
set logscale y
set yrange [*:*]
set key top right font ",9"
plot for [i=0:ncases-1] datafile index i using 1:4 with linespoints linewidth 2 pointtype 7 pointsize 0.8 \
       linecolor i + 1 title word(titles, i + 1)
unset multiplot
