import sys
from pathlib import Path

# The helpers module sits next to the tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).parent))
