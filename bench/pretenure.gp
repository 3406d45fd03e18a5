# pretenure.gp: what --pretenure changes, per case of bench/pretenure.sh.
# Left: words copied by minor collections with --pretenure over without
# (1: unchanged; lower is better). Right: CPU time with --pretenure over
# without, the median of the paired rounds with their min and max (1.01: the
# issue's ceiling for programs where nothing should be pretenured).
# Input: results/pretenure.dat from bench/pretenure.sh, one line a case:
# case copied_ratio cpu_ratio_median cpu_ratio_min cpu_ratio_max ("?": missing).
# Run: gnuplot -e "datafile='bench/results/pretenure.dat'; outfile='bench/results/pretenure.png'" bench/pretenure.gp
if (!exists("datafile")) datafile = 'bench/results/pretenure.dat'
if (!exists("outfile")) outfile = 'bench/results/pretenure.png'
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1200,520 font ",10" noenhanced
} else {
  set terminal png size 1200,520 noenhanced
}
set output outfile
set datafile missing "?"
set style fill solid 0.8 border -1
set boxwidth 0.6
set grid ytics
set xtics rotate by -35 nomirror scale 0
set offsets 0.5, 0.5, 0, 0
set multiplot layout 1,2 title "pretenuring (./vm --pretenure against ./vm, same build)"

set title "words copied by minor collections, --pretenure / without"
set ylabel "ratio (lower is better)"
set yrange [0:1.15]
plot datafile using 0:2:xtic(1) with boxes linecolor rgb "#1f77b4" notitle, \
     '' using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.7 font ",8" notitle, \
     1 with lines dashtype 2 linecolor rgb "gray40" notitle

set title "CPU time, --pretenure / without (median of paired rounds, min-max)"
set ylabel "ratio (lower is better)"
set yrange [0.4:1.45]
set key top left
plot datafile using 0:3:xtic(1) with boxes linecolor rgb "#ff7f0e" notitle, \
     '' using 0:3:4:5 with yerrorbars linecolor rgb "black" pointtype 0 notitle, \
     '' using 0:3:(sprintf("%.3f", $3)) with labels offset 2.2,0.5 font ",8" notitle, \
     1 with lines dashtype 2 linecolor rgb "gray40" notitle, \
     1.01 with lines dashtype 3 linecolor rgb "red" title "1.01"
unset multiplot
