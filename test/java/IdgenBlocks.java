// A JDBC client that numbers its rows itself, as Hibernate's pooled-lo
// optimizer does: one SELECT idgen_next_block(50) per 50 rows, the IDs
// lo .. lo + 49 assigned here and inserted with executeBatch().  Other
// threads insert with the column's DEFAULT idgen_next() at the same time.
//
// java -cp .:postgresql.jar IdgenBlocks URL USER BLOCK_THREADS BLOCKS DEFAULT_THREADS ROWS
// prints "block_rows=N default_rows=M blocks=K" and exits 0, or fails.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;

public class IdgenBlocks {
    static final int BLOCK = 50;

    interface Work {
        void run(Connection c) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        String url = args[0], user = args[1];
        int blockThreads = Integer.parseInt(args[2]);
        int blocks = Integer.parseInt(args[3]);
        int defaultThreads = Integer.parseInt(args[4]);
        int rows = Integer.parseInt(args[5]);
        AtomicLong blockRows = new AtomicLong(), defaultRows = new AtomicLong(),
                blocksTaken = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(blockThreads + defaultThreads);
        List<Throwable> failures = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();

        // The pooled-lo client: one round trip for the block, then its own IDs.
        Work blockWork = c -> {
            try (PreparedStatement next = c.prepareStatement("SELECT idgen_next_block(?)");
                 PreparedStatement ins = c.prepareStatement(
                         "INSERT INTO orders (id, block_lo, source) VALUES (?, ?, 'block')")) {
                start.await();
                for (int b = 0; b < blocks; b++) {
                    next.setInt(1, BLOCK);
                    long lo;
                    try (ResultSet rs = next.executeQuery()) {
                        rs.next();
                        lo = rs.getLong(1);
                    }
                    blocksTaken.incrementAndGet();
                    for (long id = lo; id < lo + BLOCK; id++) {
                        ins.setLong(1, id);
                        ins.setLong(2, lo);
                        ins.addBatch();
                    }
                    for (int n : ins.executeBatch())
                        if (n != 1)
                            throw new IllegalStateException("batch row count " + n);
                    c.commit();
                    blockRows.addAndGet(BLOCK);
                }
            }
        };
        // Other clients: the key is the column's DEFAULT idgen_next().
        Work defaultWork = c -> {
            try (PreparedStatement ins = c.prepareStatement(
                    "INSERT INTO orders (source) VALUES ('default')")) {
                start.await();
                for (int r = 0; r < rows; r += BLOCK) {
                    for (int k = 0; k < BLOCK && r + k < rows; k++)
                        ins.addBatch();
                    int done = 0;
                    for (int n : ins.executeBatch())
                        done += n;
                    c.commit();
                    defaultRows.addAndGet(done);
                }
            }
        };

        for (int t = 0; t < blockThreads + defaultThreads; t++) {
            Work w = t < blockThreads ? blockWork : defaultWork;
            Thread th = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url, user, "")) {
                    c.setAutoCommit(false);
                    w.run(c);
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                    start.reset();
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads)
            th.join();
        if (!failures.isEmpty()) {
            for (Throwable e : failures) {
                e.printStackTrace();
                if (e instanceof SQLException && ((SQLException) e).getNextException() != null)
                    ((SQLException) e).getNextException().printStackTrace();
            }
            System.exit(1);
        }
        System.out.println("block_rows=" + blockRows + " default_rows=" + defaultRows
                + " blocks=" + blocksTaken);
    }
}
