#!/bin/bash
A=1; B=2
C=3 && echo ok
D=(1 2 3)
E+=x
F=4 cmd
  G=5
H=6 \
  I=7
J="multi
line"
K=8 >/dev/null
typeset -r L=9
declare -i M=10
cat <<EOT
N=11
EOT
case "$1" in
a) O=12 ;;
esac
for P in 1 2; do Q=13; done
( R=14 )
{ S=15; }
T=`date`
U=~/x
V='it'\''s'
W="a \"b\" \$c"
X=x#notacomment
Y=; Z=end
