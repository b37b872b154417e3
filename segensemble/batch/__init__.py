"""Batch work over folders of images: one resumable-task runner (local processes or a Dask cluster, one
writer per output folder) under the dataset bench, the Berkeley scoring of a results folder, the comparison
of scored folders, the bench report and the fusion of folders of photos."""
