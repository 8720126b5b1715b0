# lib.sh — helpers the bench scripts source (after cd to the repo root).

# median: the median of numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# fastest: the smallest of numbers on stdin, one per line.
fastest() { sort -g | head -1; }
