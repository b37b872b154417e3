"""The graph layer: region adjacency of label maps, greedy region merging, merge trees and their cuts.

It sits above the base types and below the algorithms (segmenters, consensus
methods, the boundary detector's hierarchy) and the image pipeline, which all
build on it.
"""
