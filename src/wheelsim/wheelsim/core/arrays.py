"""Array type aliases of the core: float64 and int64 numpy arrays of any shape."""

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
