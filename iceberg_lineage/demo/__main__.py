import sys

from iceberg_lineage.demo.run import main

sys.exit(main())
