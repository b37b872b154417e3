"""Reading and writing images, label maps and BSDS ``.mat`` files.

Every reader raises :class:`~segensemble.errors.FileFormatError` naming the file
when it is missing, corrupt or of an unsupported kind, and checks the size the
file declares before decoding it (``max_pixels``); every writer is atomic.
Label maps are never unpickled (``np.load(..., allow_pickle=False)``).

Examples
--------
>>> import tempfile, os
>>> p = write_labels(os.path.join(tempfile.mkdtemp(), "seg.png"), np.arange(6).reshape(2, 3))
>>> read_labels(p).tolist()
[[0, 1, 2], [3, 4, 5]]
"""

from segensemble.io.images import (DECODE_LIMIT, IMAGE_SUFFIXES, MAX_PIXELS, apply_orientation, check_image_file,
                                   check_pixel_limit, decode_image, image_orientation, image_shape, read_image,
                                   significant_bits, write_image)
from segensemble.io.labels import (LABEL_SUFFIXES, check_label_file, read_boundary_map, read_labels,
                                   read_segmentations, write_array, write_labels)
from segensemble.io.groundtruth import (edge_map_files, ground_truth_file, ground_truth_ids, read_edge_ground_truth,
                                        read_truth)
from segensemble.io.matfiles import (GroundTruth, check_mat_limit, mat_bytes, mat_variable_names, read_ground_truth,
                                     read_ucm2, write_segmentations, write_ucm2)

__all__ = [
    "GroundTruth", "MAX_PIXELS", "IMAGE_SUFFIXES", "LABEL_SUFFIXES", "image_shape", "image_orientation",
    "apply_orientation", "check_pixel_limit", "check_image_file", "DECODE_LIMIT",
    "check_mat_limit", "check_label_file", "read_image", "decode_image", "mat_variable_names", "read_labels",
    "read_segmentations", "read_ucm2", "read_ground_truth", "write_array", "write_labels", "write_segmentations",
    "write_image", "mat_bytes", "read_boundary_map", "write_ucm2", "edge_map_files", "ground_truth_file",
    "ground_truth_ids", "read_edge_ground_truth", "read_truth", "significant_bits",
]
