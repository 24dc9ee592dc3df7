/* The floor: the cheapest HTTP/1.1 client this kernel allows through the socket API.
 *
 *   floor -c CONNS -t THREADS -d SECONDS [-k 0|1] [-s] HOST PORT PATH
 *
 * Each thread owns CONNS/THREADS connections on one edge-triggered epoll set (registered once,
 * never modified), sends one request with one send() and reads the response with recv() into one
 * buffer, framing only: the head's Content-Length, or the peer's close. -k 0 asks
 * `Connection: close` and reconnects for every request (the server closes first, so TIME_WAIT
 * stays on its side); -s speaks TLS through OpenSSL (SSL_write / SSL_read, no verification).
 * Prints one JSON line: {"responses": N, "errors_total": N, "requests_per_s": X}.
 * Loopback benchmarking only; bounded by -d.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (256 * 1024)
#define MAX_EVENTS 256

struct conn {
    int fd;
    SSL *ssl;
    int connected;      /* TCP connect (and TLS handshake) done */
    long body_left;     /* -1: head not complete yet */
    int closing;        /* the response said Connection: close: no next request on it */
    size_t head_bytes;  /* bytes of a head split across reads, kept in head[] */
    char head[2048];
};

struct options {
    int conns, threads, seconds, keepalive, tls;
    struct sockaddr_in addr;
    char request[512];
    size_t request_bytes;
    SSL_CTX *ctx;
};

static struct options opt;
static atomic_long total_responses, total_errors;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_conn(int epfd, struct conn *c) {
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (c->fd < 0) return -1;
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&opt.addr, sizeof opt.addr) < 0 && errno != EINPROGRESS) {
        close(c->fd);
        return -1;
    }
    c->connected = 0;
    c->body_left = -1;
    c->head_bytes = 0;
    c->closing = 0;
    c->ssl = NULL;
    if (opt.tls) {
        c->ssl = SSL_new(opt.ctx);
        SSL_set_fd(c->ssl, c->fd);
        SSL_set_connect_state(c->ssl);
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev);
}

static void close_conn(struct conn *c) {
    if (c->ssl) SSL_free(c->ssl);
    close(c->fd); /* also leaves the epoll set */
}

/* 1 sent, 0 would block, -1 failed */
static int send_request(struct conn *c) {
    if (c->ssl) {
        int n = SSL_write(c->ssl, opt.request, (int)opt.request_bytes);
        if (n > 0) return 1;
        int err = SSL_get_error(c->ssl, n);
        return err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE ? 0 : -1;
    }
    ssize_t n = send(c->fd, opt.request, opt.request_bytes, MSG_NOSIGNAL);
    return n == (ssize_t)opt.request_bytes ? 1 : -1; /* a 100-byte request fits an empty socket */
}

/* >0 bytes, 0 peer closed, -1 would block, -2 failed */
static long receive(struct conn *c, char *buf) {
    if (c->ssl) {
        int n = SSL_read(c->ssl, buf, BUF_BYTES);
        if (n > 0) return n;
        int err = SSL_get_error(c->ssl, n);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return -1;
        return err == SSL_ERROR_ZERO_RETURN || err == SSL_ERROR_SYSCALL ? 0 : -2;
    }
    ssize_t n = recv(c->fd, buf, BUF_BYTES, 0);
    if (n >= 0) return n;
    return errno == EAGAIN ? -1 : -2;
}

/* Framing: find the head's end and Content-Length, then count the body down. 1 when complete. */
static int frame(struct conn *c, const char *data, size_t n) {
    if (c->body_left < 0) {
        size_t take = n < sizeof c->head - 1 - c->head_bytes ? n : sizeof c->head - 1 - c->head_bytes;
        memcpy(c->head + c->head_bytes, data, take);
        c->head_bytes += take;
        c->head[c->head_bytes] = 0;
        char *end = strstr(c->head, "\r\n\r\n");
        if (!end) return 0;
        size_t head_len = (size_t)(end + 4 - c->head);
        char *length = strcasestr(c->head, "\r\ncontent-length:");
        char *close_ = strcasestr(c->head, "\r\nconnection: close");
        c->closing = close_ && close_ < end;
        /* Without a length the body ends at the close (the caller reads to EOF either way). */
        c->body_left = length && length < end ? atol(length + 17) : (1L << 62);
        c->body_left -= (long)(c->head_bytes - head_len) + (long)(n - take);
        c->head_bytes = 0;
    } else {
        c->body_left -= (long)n;
    }
    return c->body_left <= 0;
}

/* Drive one connection after an event; returns 0 to keep it, -1 to replace it (closed or failed). */
static int drive(struct conn *c, char *buf, long *responses, long *errors) {
    if (!c->connected) {
        if (c->ssl) {
            int r = SSL_do_handshake(c->ssl);
            if (r != 1) {
                int err = SSL_get_error(c->ssl, r);
                if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return 0;
                ++*errors;
                return -1;
            }
        } else {
            int so_error = 0;
            socklen_t len = sizeof so_error;
            getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
            if (so_error) {
                ++*errors;
                return -1;
            }
        }
        c->connected = 1;
        if (send_request(c) < 0) {
            ++*errors;
            return -1;
        }
    }
    for (;;) {
        long n = receive(c, buf);
        if (n == -1) return 0;
        if (n == -2) {
            ++*errors;
            return -1;
        }
        if (n == 0) {
            if (c->body_left > (1L << 61)) ++*responses; /* framed by the close */
            else if (c->body_left > 0 || c->head_bytes > 0) ++*errors; /* cut inside a response */
            return -1;
        }
        if (frame(c, buf, (size_t)n)) {
            ++*responses;
            if (!opt.keepalive || c->closing) {
                c->body_left = 0; /* wait for the server's close */
                continue;
            }
            c->body_left = -1;
            int sent = send_request(c);
            if (sent < 0) {
                ++*errors;
                return -1;
            }
        }
        /* Edge-triggered: a short plain read drained the socket; TLS may hold decrypted bytes. */
        if (!c->ssl && n < BUF_BYTES) return 0;
    }
}

static void *run_thread(void *arg) {
    int share = (int)(long)arg;
    int epfd = epoll_create1(0);
    struct conn *conns = calloc((size_t)share, sizeof *conns);
    char *buf = malloc(BUF_BYTES);
    long responses = 0, errors = 0;
    for (int i = 0; i < share; i++)
        if (open_conn(epfd, &conns[i]) < 0) errors++;
    struct epoll_event events[MAX_EVENTS];
    double end = now_s() + opt.seconds;
    while (now_s() < end) {
        int n = epoll_wait(epfd, events, MAX_EVENTS, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (drive(c, buf, &responses, &errors) < 0) {
                close_conn(c);
                if (open_conn(epfd, c) < 0) errors++;
            }
        }
    }
    for (int i = 0; i < share; i++) close_conn(&conns[i]);
    atomic_fetch_add(&total_responses, responses);
    atomic_fetch_add(&total_errors, errors);
    free(buf);
    free(conns);
    close(epfd);
    return NULL;
}

int main(int argc, char **argv) {
    opt.conns = 100, opt.threads = 2, opt.seconds = 10, opt.keepalive = 1;
    int o;
    while ((o = getopt(argc, argv, "c:t:d:k:s")) != -1) {
        switch (o) {
        case 'c': opt.conns = atoi(optarg); break;
        case 't': opt.threads = atoi(optarg); break;
        case 'd': opt.seconds = atoi(optarg); break;
        case 'k': opt.keepalive = atoi(optarg); break;
        case 's': opt.tls = 1; break;
        default: goto usage;
        }
    }
    if (argc - optind != 3 || opt.conns < 1 || opt.threads < 1 || opt.seconds < 1) goto usage;
    opt.addr.sin_family = AF_INET;
    opt.addr.sin_port = htons((unsigned short)atoi(argv[optind + 1]));
    if (inet_pton(AF_INET, argv[optind], &opt.addr.sin_addr) != 1) {
        fprintf(stderr, "floor: %s is not an IPv4 address; give the server's numeric address\n", argv[optind]);
        return 2;
    }
    opt.request_bytes = (size_t)snprintf(opt.request, sizeof opt.request,
        "GET %s HTTP/1.1\r\nHost: %s:%s\r\n%s\r\n", argv[optind + 2], argv[optind], argv[optind + 1],
        opt.keepalive ? "" : "Connection: close\r\n");
    if (opt.tls) {
        opt.ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(opt.ctx, SSL_VERIFY_NONE, NULL);
    }
    pthread_t threads[64];
    if (opt.threads > 64) opt.threads = 64;
    double start = now_s();
    for (int t = 0; t < opt.threads; t++) {
        long share = opt.conns / opt.threads + (t < opt.conns % opt.threads);
        pthread_create(&threads[t], NULL, run_thread, (void *)share);
    }
    for (int t = 0; t < opt.threads; t++) pthread_join(threads[t], NULL);
    double elapsed = now_s() - start;
    printf("{\"responses\": %ld, \"errors_total\": %ld, \"requests_per_s\": %.1f}\n",
           atomic_load(&total_responses), atomic_load(&total_errors), atomic_load(&total_responses) / elapsed);
    return 0;
usage:
    fprintf(stderr, "usage: floor -c CONNS -t THREADS -d SECONDS [-k 0|1] [-s] HOST PORT PATH\n");
    return 2;
}
