# heapinject-series.gp - plot heapinject's time series (--format series) with gnuplot.
#
#   heapinject -p PID --duration 60 --format series -o heap.csv
#   gnuplot -e "in='heap.csv'; out='heap.png'" contrib/heapinject-series.gp
#
# Variables (all optional except in):
#   in     the CSV file: t_s,live_bytes,alloc_bytes,rss_bytes (a header line first)
#   out    output PNG (default: in with .png appended)
#   title  plot title (default: the file name)
#
# Live heap and RSS share the left axis; bytes allocated since attach, which
# only grow and are usually much larger, go on the right axis.
# Needs gnuplot with the pngcairo or png terminal (Debian: gnuplot-nox).

if (!exists("in")) {
    print "usage: gnuplot -e \"in='heap.csv'; out='heap.png'\" heapinject-series.gp"
    exit status 2
}
if (!exists("out")) out = in . ".png"
if (!exists("title")) title = "heapinject: " . in

# pngcairo draws nicer text; plain png (libgd) is what some builds have.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1000,500 noenhanced font "sans,10"
} else {
    set terminal png size 1000,500 noenhanced
}
set output out

set datafile separator ","
set key autotitle columnhead
set title title noenhanced
set xlabel "seconds since attach"
set ylabel "MiB (live heap, RSS)"
set y2label "MiB allocated since attach"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set grid ytics
set offsets 0, 0, graph 0.08, 0
set key below horizontal
set style data linespoints

MiB = 1024.0 * 1024.0
plot in using 1:($2 / MiB) title "live heap (estimate)" lw 2 pt 7 ps 0.5, \
     ''  using 1:($4 / MiB) title "RSS" lw 1 pt 7 ps 0.4, \
     ''  using 1:($3 / MiB) axes x1y2 title "allocated since attach (right axis)" lw 1 dt 2 pt 7 ps 0.4
