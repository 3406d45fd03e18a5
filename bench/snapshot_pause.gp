# snapshot_pause.gp: each round of bench/snapshot_pause.sh, one point: the
# snapshot's pause (its end record's pause us) against Gc.full_major() (left)
# and Gc.major() (right) of the same heap in the same round; the lines y = x and
# y = 1.2 x (issue 30's floor against a full major collection). Log-log.
# Input: results/snapshot_pause.csv (a header, then shape,size,rate,round,
# full_major_us,major_us,snapshot_call_us,pause_us,...).
# Run: gnuplot -e "datafile='bench/results/snapshot_pause.csv'; outfile='bench/results/snapshot_pause.png'" bench/snapshot_pause.gp
if (!exists("datafile")) datafile = 'bench/results/snapshot_pause.csv'
if (!exists("outfile")) outfile = 'bench/results/snapshot_pause.png'
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1200,540 font ",10" noenhanced
} else {
  set terminal png size 1200,540 noenhanced
}
set output outfile
set datafile separator ","
set logscale xy
set grid
set key top left font ",9"
set xlabel "collection (ms)"
set ylabel "snapshot pause (ms)"
set multiplot layout 1,2 title "A snapshot's pause against a major collection of the same heap (one point a round; rates 1e-4 to 1e-2)"
shapes = "sessions tree table"
set title "against Gc.full_major()"
plot for [i=1:3] datafile using (strcol(1) eq word(shapes, i) ? $5/1000 : NaN):($8/1000) with points pt 7 ps 0.8 title word(shapes, i), \
     x with lines dashtype 2 lc rgb "gray" title "y = x", \
     1.2 * x with lines lc rgb "red" title "y = 1.2 x (floor)"
set title "against Gc.major() (one major cycle)"
set xlabel "Gc.major() (ms)"
plot for [i=1:3] datafile using (strcol(1) eq word(shapes, i) ? $6/1000 : NaN):($8/1000) with points pt 7 ps 0.8 title word(shapes, i), \
     x with lines dashtype 2 lc rgb "gray" title "y = x", \
     1.2 * x with lines lc rgb "red" title "y = 1.2 x"
unset multiplot
