"""The papers hand-off through Spark: records in, Parquet with vectors out.

Run by bench/spark.sh (see there). Reads JSON Lines records, pipes each
partition through `papers embed --records` (one process per partition, as
a cluster would run it on each executor), and writes the records with their
`embedding` (array<float>) as Parquet, Spark's own writer.

    python spark_embed.py PAPERS_BINARY INPUT.jsonl OUTPUT_DIR PARTITIONS
"""

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import types as T


def main():
    papers, source, target, partitions = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    spark = (
        SparkSession.builder.master(f"local[{partitions}]")
        .appName("papers-embed")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    lines = spark.sparkContext.textFile(source, minPartitions=partitions)
    # Each partition's lines go to one `papers embed --records` on stdin;
    # its stdout lines (the records with their vectors) come back.
    env = {k: v for k, v in os.environ.items() if k.startswith(("PAPERS_", "HF_"))}
    embedded = lines.pipe(f"{papers} --quiet embed --records", env=env)
    schema = T.StructType(
        [
            T.StructField("id", T.StringType()),
            T.StructField("title", T.StringType()),
            T.StructField("abstract", T.StringType()),
            T.StructField("authors", T.ArrayType(T.StringType())),
            T.StructField("categories", T.ArrayType(T.StringType())),
            T.StructField("embedding", T.ArrayType(T.FloatType(), containsNull=False)),
        ]
    )

    def row(line):
        record = json.loads(line)

        def first(*keys):
            found = next((record[k] for k in keys if record.get(k) is not None), None)
            return None if found is None else str(found)

        def strings(key):
            value = record.get(key)
            if value is None:
                return None
            return [str(v) for v in value] if isinstance(value, list) else str(value).split(", ")

        return (
            first("id", "_id"),
            first("title"),
            # arXiv crawls say `summary`, BEIR `text`: one column here.
            first("abstract", "summary", "text"),
            strings("authors"),
            strings("categories"),
            [float(x) for x in record["embedding"]],
        )

    frame = spark.createDataFrame(embedded.map(row), schema)
    frame.write.mode("overwrite").parquet(target)
    written = spark.read.parquet(target)
    print(f"spark: {written.count()} records in {written.rdd.getNumPartitions()} part files under {target}")
    spark.stop()


if __name__ == "__main__":
    main()
