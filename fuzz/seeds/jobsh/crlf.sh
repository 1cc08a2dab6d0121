#!/bin/bash
LR=0.1
EPOCHS=5
